package voicebench

import (
	"fmt"
	"hash/fnv"
	"strconv"
	"strings"
)

// Shard is one part of a run split across machines (voicebench run
// --shard K/N): the samples whose id hashes to Index of Count. The
// partition depends only on the subset and each sample's id, so it is the
// same on every machine, across resumes and whatever the number of
// workers. The zero Shard is the whole run.
type Shard struct {
	Index int `json:"index"`
	Count int `json:"count"`
}

// ParseShard reads "K/N": shard K (from 0) of N.
func ParseShard(s string) (Shard, error) {
	k, n, ok := strings.Cut(s, "/")
	index, err1 := strconv.Atoi(k)
	count, err2 := strconv.Atoi(n)
	if !ok || err1 != nil || err2 != nil || count < 1 || index < 0 || index >= count {
		return Shard{}, fmt.Errorf("voicebench: shard %q is not K/N with 0 <= K < N (e.g. 0/4 ... 3/4)", s)
	}
	return Shard{Index: index, Count: count}, nil
}

func (s Shard) String() string {
	if s.Count == 0 {
		return "all"
	}
	return fmt.Sprintf("%d/%d", s.Index, s.Count)
}

// Has is whether the sample id of subset belongs to the shard.
func (s Shard) Has(subset, id string) bool {
	if s.Count <= 1 {
		return true
	}
	h := fnv.New64a()
	h.Write([]byte(subset))
	h.Write([]byte{0})
	h.Write([]byte(id))
	return h.Sum64()%uint64(s.Count) == uint64(s.Index)
}
