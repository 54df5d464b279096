package spm

import "sort"

// trie is a byte trie over piece strings stored in flat slices.
type trie struct {
	nodes []trieNode
	edges []trieEdge
}

type trieNode struct {
	id    int32 // piece id ending here, or -1
	first int32 // index of the first outgoing edge in edges
	n     int32 // number of outgoing edges (sorted by label)
}

type trieEdge struct {
	label byte
	child int32
}

func buildTrie(pieces map[string]int) trie {
	keys := make([]string, 0, len(pieces))
	for k := range pieces {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var t trie
	t.nodes = append(t.nodes, trieNode{id: -1})
	// Breadth-first over the sorted keys: for node at depth d covering
	// keys[lo:hi] (all sharing a d-byte prefix), group children by byte d.
	type span struct {
		node, lo, hi, depth int
	}
	queue := []span{{0, 0, len(keys), 0}}
	for len(queue) > 0 {
		s := queue[0]
		queue = queue[1:]
		lo := s.lo
		if lo < s.hi && len(keys[lo]) == s.depth {
			t.nodes[s.node].id = int32(pieces[keys[lo]])
			lo++
		}
		t.nodes[s.node].first = int32(len(t.edges))
		for i := lo; i < s.hi; {
			c := keys[i][s.depth]
			j := i + 1
			for j < s.hi && keys[j][s.depth] == c {
				j++
			}
			child := len(t.nodes)
			t.nodes = append(t.nodes, trieNode{id: -1})
			t.edges = append(t.edges, trieEdge{label: c, child: int32(child)})
			t.nodes[s.node].n++
			queue = append(queue, span{child, i, j, s.depth + 1})
			i = j
		}
	}
	return t
}

// next returns the child of node along byte c, or -1.
func (t *trie) next(node int32, c byte) int32 {
	nd := &t.nodes[node]
	edges := t.edges[nd.first : nd.first+nd.n]
	lo, hi := 0, len(edges)
	for lo < hi {
		mid := (lo + hi) / 2
		if edges[mid].label < c {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	if lo < len(edges) && edges[lo].label == c {
		return edges[lo].child
	}
	return -1
}

// walk calls f(length, id) for every piece that is a prefix of s, in
// increasing length.
func (t *trie) walk(s string, f func(length, id int)) {
	if len(t.nodes) == 0 {
		return
	}
	node := int32(0)
	for i := 0; i < len(s); i++ {
		if node = t.next(node, s[i]); node < 0 {
			return
		}
		if id := t.nodes[node].id; id >= 0 {
			f(i+1, int(id))
		}
	}
}

// longestPrefix returns the length and id of the longest piece that is a
// prefix of s, or (0, -1).
func (t *trie) longestPrefix(s string) (int, int) {
	n, id := 0, -1
	t.walk(s, func(l, i int) { n, id = l, i })
	return n, id
}
