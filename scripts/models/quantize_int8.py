#!/usr/bin/env python3
"""Weight-only int8 quantization of an ONNX model, per output channel.

Every weight of a MatMul, Gemm or Conv that is a constant of the graph (an
initializer with at least two dimensions) is stored as int8 with one fp32
scale per output channel (symmetric, zero point 0), and a DequantizeLinear
node gives the operator its fp32 weight back at run time. Activations stay
fp32, so the graph's inputs, outputs and numerics otherwise stay as they
were: only the weights lose precision. This is the sherpa-onnx recipe's
first half (weights int8, computation in float); what ONNX Runtime then does
with the DequantizeLinear nodes decides the memory and speed at run time,
which `voice-agent bench stages` measures (docs/performance.md has the
figures for the full-size Smart Turn stand-in).

No onnxruntime Python package is needed (Debian 12 has none): the graph is
rewritten with the onnx package alone.

    /usr/bin/python3 scripts/models/quantize_int8.py IN.onnx OUT.onnx
"""
import sys

import numpy as np
import onnx
from onnx import helper, numpy_helper, TensorProto

# Which input of each operator is its weight, and which axis of that weight
# is the output channel.
WEIGHT_INPUTS = {
    "MatMul": (1, 1),  # B [K, N]: one scale per output column
    "Gemm": (1, None),  # axis from transB
    "Conv": (1, 0),  # W [M, C/group, k...]: one scale per output channel
}


def quantize(model):
    g = model.graph
    inits = {t.name: t for t in g.initializer}
    users = {}
    for node in g.node:
        for name in node.input:
            users.setdefault(name, []).append(node)
    done = {}
    stats = {"weights": 0, "fp32_bytes": 0, "int8_bytes": 0}
    new_nodes = []
    for node in g.node:
        spec = WEIGHT_INPUTS.get(node.op_type)
        if spec is None or len(node.input) <= spec[0]:
            continue
        name = node.input[spec[0]]
        t = inits.get(name)
        if t is None or t.data_type != TensorProto.FLOAT or len(t.dims) < 2:
            continue
        axis = spec[1]
        if node.op_type == "Gemm":
            trans_b = next((a.i for a in node.attribute if a.name == "transB"), 0)
            axis = 0 if trans_b else 1
        key = (name, axis)
        if key not in done:
            w = numpy_helper.to_array(t).astype(np.float32)
            moved = np.moveaxis(w, axis, 0).reshape(w.shape[axis], -1)
            scale = np.abs(moved).max(axis=1) / 127.0
            scale[scale == 0] = 1.0
            shape = [1] * w.ndim
            shape[axis] = w.shape[axis]
            q = np.clip(np.round(w / scale.reshape(shape)), -127, 127).astype(np.int8)
            qn, sn, zn, out = name + "_int8", name + "_scale", name + "_zero", name + "_dq"
            g.initializer.append(numpy_helper.from_array(q, qn))
            g.initializer.append(numpy_helper.from_array(scale.astype(np.float32), sn))
            g.initializer.append(numpy_helper.from_array(np.zeros(w.shape[axis], np.int8), zn))
            new_nodes.append(helper.make_node("DequantizeLinear", [qn, sn, zn], [out], name=name + "_dequantize", axis=axis))
            done[key] = out
            stats["weights"] += 1
            stats["fp32_bytes"] += w.nbytes
            stats["int8_bytes"] += q.nbytes + scale.nbytes
        node.input[spec[0]] = done[key]
    # Drop the fp32 originals nothing uses any more.
    used = {i for n in list(g.node) + new_nodes for i in n.input}
    keep = [t for t in g.initializer if t.name in used or t.name not in {k[0] for k in done}]
    del g.initializer[:]
    g.initializer.extend(keep)
    # DequantizeLinear nodes first: the graph stays topologically sorted.
    nodes = new_nodes + list(g.node)
    del g.node[:]
    g.node.extend(nodes)
    if model.opset_import[0].version < 13:
        model.opset_import[0].version = 13  # per-axis DequantizeLinear
    return stats


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    model = onnx.load(sys.argv[1])
    stats = quantize(model)
    onnx.checker.check_model(model)
    onnx.save(model, sys.argv[2])
    print("quantized %d weights: %.1f MiB fp32 -> %.1f MiB int8" % (
        stats["weights"], stats["fp32_bytes"] / 2**20, stats["int8_bytes"] / 2**20))


if __name__ == "__main__":
    main()
