package spm

import (
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"
)

// This file ports sentencepiece's normalizer. Line references are to
// google/sentencepiece at commit 273449044caa593c2fd7eb7550cb3ab2cff93f1a.
// The test fixtures come from python3-sentencepiece 0.1.97, whose
// normalizer and encoders differ from that commit only in form.

// A charsmap is a compiled normalization rule
// (NormalizerSpec.precompiled_charsmap, such as nmt_nfkc's): a darts-clone
// double-array trie whose keys are UTF-8 strings and whose values are
// offsets of NUL-terminated replacements in normalized.
type charsmap struct {
	units      []uint32
	normalized string
}

// Fields of a darts-clone unit (third_party/darts_clone/darts.h:56-74).

func unitHasLeaf(u uint32) bool { return u>>8&1 == 1 }

func unitValue(u uint32) uint32 { return u & (1<<31 - 1) }

// unitLabel keeps the top bit, which marks a leaf, so that a leaf never
// matches an input byte.
func unitLabel(u uint32) uint32 { return u & (1<<31 | 0xFF) }

func unitOffset(u uint32) uint32 { return u >> 10 << (u & (1 << 9) >> 6) }

// parseCharsmap decodes the blob: a little-endian uint32 byte size of the
// trie, the trie's units, then the replacement strings.
func parseCharsmap(blob []byte) (*charsmap, error) {
	if len(blob) <= 4 {
		return nil, errors.New("precompiled_charsmap is broken: too short")
	}
	size := binary.LittleEndian.Uint32(blob)
	// sentencepiece compares size with the whole blob, header included
	// (google/sentencepiece src/normalizer.cc:289), and so reads up to four
	// bytes past its end; those sizes are rejected here too.
	if uint64(size) > uint64(len(blob)-4) {
		return nil, fmt.Errorf("precompiled_charsmap is broken: trie size %d exceeds the blob (%d bytes)", size, len(blob))
	}
	trie := blob[4 : 4+size]
	c := &charsmap{
		// A trailing partial unit is dropped, as by set_array's unit count
		// (src/normalizer.cc:64-65).
		units:      make([]uint32, len(trie)/4),
		normalized: string(blob[4+size:]),
	}
	for i := range c.units {
		c.units[i] = binary.LittleEndian.Uint32(trie[4*i:])
	}
	if err := c.check(); err != nil {
		return nil, fmt.Errorf("precompiled_charsmap is broken: %w", err)
	}
	return c, nil
}

// check walks every state the trie can reach and returns an error if a
// lookup could index outside the units or read a replacement that is not
// NUL-terminated. sentencepiece trusts the blob; here a broken one fails
// to load instead of failing while encoding.
func (c *charsmap) check() error {
	n := uint32(len(c.units))
	if n == 0 {
		return errors.New("empty trie")
	}
	lastNUL := strings.LastIndexByte(c.normalized, 0)
	// A state is the base its children are found at, base^label; all 256
	// of them share base's 256-unit block, so a base whose block ends
	// inside the array is safe to step from with any byte.
	root := unitOffset(c.units[0])
	if root|0xFF >= n {
		return fmt.Errorf("root offset %d out of range (%d units)", root, n)
	}
	seen := make([]bool, n)
	seen[root] = true
	stack := []uint32{root}
	for len(stack) > 0 {
		base := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		for label := range uint32(256) {
			pos := base ^ label
			u := c.units[pos]
			if unitLabel(u) != label {
				continue
			}
			next := pos ^ unitOffset(u)
			if next|0xFF >= n {
				return fmt.Errorf("unit %d: offset out of range (%d units)", pos, n)
			}
			if unitHasLeaf(u) {
				if v := unitValue(c.units[next]); int64(v) > int64(lastNUL) {
					return fmt.Errorf("unit %d: replacement at %d is not NUL-terminated within %d bytes", next, v, len(c.normalized))
				}
			}
			if !seen[next] {
				seen[next] = true
				stack = append(stack, next)
			}
		}
	}
	return nil
}

// longestMatch returns the replacement of the longest key that is a
// prefix of s, and that key's length; n is 0 if no key is.
// sentencepiece keeps at most 32 matches and takes the longest
// (src/normalizer.cc:218-228); its rule builder never makes more.
func (c *charsmap) longestMatch(s string) (rep string, n int) {
	// darts.h:469-492, commonPrefixSearch.
	pos := unitOffset(c.units[0])
	v := uint32(0)
	for i := 0; i < len(s); i++ {
		b := uint32(s[i])
		pos ^= b
		u := c.units[pos]
		if unitLabel(u) != b {
			break
		}
		pos ^= unitOffset(u)
		if unitHasLeaf(u) {
			n, v = i+1, unitValue(c.units[pos])
		}
	}
	if n == 0 {
		return "", 0
	}
	rep = c.normalized[v:]
	return rep[:strings.IndexByte(rep, 0)], n
}

// prefixMatch is PrefixMatcher::PrefixMatch (src/normalizer.cc:324-346):
// the length of the longest user-defined piece that prefixes s, and
// found; or, when none does, the length of s's first character judged
// from its lead byte alone.
func (m *Model) prefixMatch(s string) (n int, found bool) {
	if m.hasUser {
		if n, _ := m.user.longestPrefix(s); n > 0 {
			return n, true
		}
	}
	return min(len(s), oneCharLen(s[0])), false
}

// normalizePrefix returns the normalized form of the longest prefix of s
// and how many bytes of s it consumed (src/normalizer.cc:195-253).
// User-defined pieces are kept as they are, then the charsmap's longest
// rule applies; any other character is itself, and a malformed UTF-8
// byte becomes U+FFFD.
func (m *Model) normalizePrefix(s string) (string, int) {
	if n, found := m.prefixMatch(s); found {
		return s[:n], n
	}
	if m.charsmap != nil {
		if rep, n := m.charsmap.longestMatch(s); n > 0 {
			return rep, n
		}
	}
	r, n := utf8.DecodeRuneInString(s)
	if r == utf8.RuneError && n <= 1 {
		return replacementChar, 1
	}
	return s[:n], n
}

// normalize is sentencepiece's Normalizer::Normalize
// (src/normalizer.cc:71-186), without the offsets into text.
func (m *Model) normalize(s string) string {
	ns := m.normalizer
	suffix := m.trainer.treatWhitespaceAsSuffix
	// normalizer.cc:86-95: leading text that normalizes to " " goes.
	if ns.removeExtraWhitespaces {
		for s != "" {
			p, n := m.normalizePrefix(s)
			if p != " " {
				break
			}
			s = s[n:]
		}
	}
	if s == "" {
		return ""
	}
	ws := " "
	if ns.escapeWhitespaces {
		ws = spaceSymbol
	}
	var b strings.Builder
	b.Grow(len(s) * 3 / 2)
	if ns.addDummyPrefix && !suffix { // normalizer.cc:128
		b.WriteString(ws)
	}
	// normalizer.cc:130-163: a replacement loses its leading spaces when
	// the previous one ended in a space.
	prevSpace := ns.removeExtraWhitespaces
	for s != "" {
		p, n := m.normalizePrefix(s)
		s = s[n:]
		for prevSpace && strings.HasPrefix(p, " ") {
			p = p[1:]
		}
		if p != "" {
			if ns.escapeWhitespaces {
				for i := 0; i < len(p); i++ {
					if p[i] == ' ' {
						b.WriteString(spaceSymbol)
					} else {
						b.WriteByte(p[i])
					}
				}
			} else {
				b.WriteString(p)
			}
			prevSpace = strings.HasSuffix(p, " ")
		}
		if !ns.removeExtraWhitespaces {
			prevSpace = false
		}
	}
	out := b.String()
	if ns.removeExtraWhitespaces { // normalizer.cc:166-176
		for strings.HasSuffix(out, ws) {
			out = out[:len(out)-len(ws)]
		}
	}
	if ns.addDummyPrefix && suffix { // normalizer.cc:179
		out += ws
	}
	return out
}
