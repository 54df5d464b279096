#!/usr/bin/env python3
"""Tiny random-weight stand-ins for Smart Turn v3, for turn/smartturn tests.

Writes, under turn/smartturn/testdata/:

  smart_turn_tiny.onnx          a few conv/linear layers with Smart Turn v3's
                                exact signature: input `input_features` f32
                                [batch, 80, 800], output `logits` f32
                                [batch, 1], already a probability (the sigmoid
                                is inside the graph, as in the real export)
  smart_turn_tiny_golden.json   the tiny model's probability, computed with
                                torch, for the features of the 1 s and 5 s
                                golden inputs and for a fixed pattern tensor
  smart_turn_wrong_name.onnx    input named `input_values`: must be rejected
  smart_turn_wrong_shape.onnx   input [1, 80, 1600] (v2's 16 s): must be rejected
  smart_turn_not_prob.onnx      right signature, but outputs values > 1: the
                                session must refuse them as probabilities

The features come from whisper_features_golden.py (same folder), so the Go
test that reproduces these probabilities checks features -> tensor layout ->
session end to end. Weights come from a fixed seed.

Regenerate (from the repository root; Debian: apt-get install -y
python3-numpy python3-onnx python3-torch; use /usr/bin/python3):

    /usr/bin/python3 scripts/models/make_tiny_smart_turn.py

then run `go test ./turn/...`. Torch versions may serialize the model
differently; the golden JSON is rewritten with it, so the pair stays
consistent.
"""
import json
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper
import torch
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import whisper_features_golden as wf  # noqa: E402

OUT_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "turn", "smartturn", "testdata")
OPSET = 17


class TinySmartTurn(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv1d(80, 16, kernel_size=5, stride=4, padding=2)  # 800 -> 200
        self.conv2 = nn.Conv1d(16, 16, kernel_size=5, stride=4, padding=2)  # 200 -> 50
        self.pool = nn.AvgPool1d(5)  # 50 -> 10
        self.fc = nn.Linear(160, 1)

    def hidden(self, x):
        x = torch.relu(self.conv1(x))
        x = torch.tanh(self.conv2(x))
        return torch.flatten(self.pool(x), 1)

    def forward(self, input_features):
        return torch.sigmoid(self.fc(self.hidden(input_features)))


def pattern():
    """The fixed pattern input: value[m, t] = ((m*800 + t) % 97) / 97 - 0.5."""
    i = np.arange(wf.N_MELS * wf.N_FRAMES)
    return ((i % 97) / 97.0 - 0.5).astype(np.float32).reshape(1, wf.N_MELS, wf.N_FRAMES)


def tiny_graph(path, in_name, in_dims, add):
    """A helper model: mean of the input, then a sigmoid, or + add (no sigmoid) when add is set."""
    x = helper.make_tensor_value_info(in_name, TensorProto.FLOAT, in_dims)
    y = helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["batch", 1])
    nodes = [
        helper.make_node("ReduceMean", [in_name], ["m1"], axes=[2], keepdims=0),
        helper.make_node("ReduceMean", ["m1"], ["m2"], axes=[1], keepdims=1),
    ]
    inits = []
    if add is None:
        nodes.append(helper.make_node("Sigmoid", ["m2"], ["logits"]))
    else:
        inits.append(helper.make_tensor("add", TensorProto.FLOAT, [], [add]))
        nodes.append(helper.make_node("Add", ["m2", "add"], ["logits"]))
    graph = helper.make_graph(nodes, "tiny_" + os.path.basename(path).split(".")[0], [x], [y], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)], producer_name="make_tiny_smart_turn.py")
    model.ir_version = 8
    onnx.checker.check_model(model)
    onnx.save(model, path)


def golden_inputs():
    inputs = {}
    for name, seconds in wf.CASES:
        if name in ("1s", "5s"):
            feats = wf.features(wf.test_signal(seconds)).astype(np.float32)
            inputs["features_" + name] = feats.reshape(1, wf.N_MELS, wf.N_FRAMES)
    inputs["pattern"] = pattern()
    return inputs


def calibrated_model(inputs):
    """The tiny model, weights from the seed, its last layer calibrated so the
    probabilities sit mid-range and far apart (a saturated sigmoid would make
    the golden test toothless): the 1 s and 5 s features land near logits -1
    and +1."""
    torch.manual_seed(20250101)
    model = TinySmartTurn().eval()
    with torch.no_grad():
        h1 = model.hidden(torch.from_numpy(inputs["features_1s"]))[0]
        h5 = model.hidden(torch.from_numpy(inputs["features_5s"]))[0]
        d = h5 - h1
        w = model.fc.weight[0]
        w += (2.0 - torch.dot(w, d)) * d / torch.dot(d, d)
        model.fc.bias[0] = -torch.dot(w, (h1 + h5) / 2)
    return model


def main():
    inputs = golden_inputs()
    model = calibrated_model(inputs)

    path = os.path.join(OUT_DIR, "smart_turn_tiny.onnx")
    dummy = torch.from_numpy(inputs["pattern"])
    torch.onnx.export(model, dummy, path, input_names=["input_features"], output_names=["logits"],
                      dynamic_axes={"input_features": {0: "batch"}, "logits": {0: "batch"}},
                      opset_version=OPSET, do_constant_folding=True)
    m = onnx.load(path)
    onnx.checker.check_model(m)
    print("wrote %s (%d bytes)" % (path, os.path.getsize(path)))

    golden = {"model": "smart_turn_tiny.onnx",
              "note": "probabilities from torch; regenerate with scripts/models/make_tiny_smart_turn.py",
              "pattern": "value[m, t] = ((m*800 + t) % 97) / 97 - 0.5",
              "cases": []}
    with torch.no_grad():
        for name, x in inputs.items():
            p = float(model(torch.from_numpy(x))[0, 0])
            golden["cases"].append({"input": name, "probability": p})
            print("%s: p=%.6f" % (name, p))
    with open(os.path.join(OUT_DIR, "smart_turn_tiny_golden.json"), "w") as fh:
        json.dump(golden, fh, indent=1)
        fh.write("\n")

    tiny_graph(os.path.join(OUT_DIR, "smart_turn_wrong_name.onnx"), "input_values", ["batch", 80, 800], None)
    tiny_graph(os.path.join(OUT_DIR, "smart_turn_wrong_shape.onnx"), "input_features", ["batch", 80, 1600], None)
    tiny_graph(os.path.join(OUT_DIR, "smart_turn_not_prob.onnx"), "input_features", ["batch", 80, 800], 5.0)


if __name__ == "__main__":
    main()
