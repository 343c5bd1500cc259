package rowhash

import (
	"crypto/sha256"
	"encoding/binary"
	"math/bits"
	"math/rand/v2"
	"testing"
)

// padded lays each message in its own padded block.
func padded(msgs [][]byte) []byte {
	blocks := make([]byte, len(msgs)*BlockSize)
	for i, m := range msgs {
		Pad(blocks[i*BlockSize:(i+1)*BlockSize], len(m))
		copy(blocks[i*BlockSize:], m)
	}
	return blocks
}

// messages of every length a block holds, random content, more than one chunk.
func messages(n int) [][]byte {
	rng := rand.New(rand.NewPCG(1, 2))
	msgs := make([][]byte, n)
	for i := range msgs {
		m := make([]byte, i%(MaxShort+1))
		for j := range m {
			m[j] = byte(rng.Uint32())
		}
		msgs[i] = m
	}
	return msgs
}

func TestDigestsMatchCryptoSHA256(t *testing.T) {
	msgs := messages(3*chunk + 7)
	blocks := padded(msgs)
	out := make([]uint32, 8*len(msgs))
	digests(out, blocks)
	for i, m := range msgs {
		want := sha256.Sum256(m)
		for w := range 8 {
			if got := out[8*i+w]; got != binary.BigEndian.Uint32(want[4*w:]) {
				t.Fatalf("message %d (%d bytes), word %d: got %08x, crypto/sha256 gives %x (accelerated=%v)", i, len(m), w, got, want, Accelerated)
			}
		}
	}
}

func TestAddSumsDigestsAsBigEndianNumbers(t *testing.T) {
	msgs := messages(2*chunk + 3)
	var want [4]uint64
	for _, m := range msgs {
		d := sha256.Sum256(m)
		var carry uint64
		for i := range 4 {
			want[i], carry = bits.Add64(want[i], binary.BigEndian.Uint64(d[24-8*i:]), carry)
		}
	}
	for _, accelerated := range []bool{Accelerated, false} {
		saved := Accelerated
		Accelerated = accelerated
		var got [4]uint64
		Add(&got, padded(msgs))
		Accelerated = saved
		if got != want {
			t.Errorf("accelerated=%v: sum %x, want %x", accelerated, got, want)
		}
	}
}

// BenchmarkAdd compares hashing padded blocks with one crypto/sha256 call
// per message, for 40-byte messages (a typical canonical row).
func BenchmarkAdd(b *testing.B) {
	msgs := make([][]byte, 4096)
	for i := range msgs {
		msgs[i] = make([]byte, 40)
		msgs[i][0] = byte(i)
	}
	blocks := padded(msgs)
	b.Run("blocks", func(b *testing.B) {
		b.Logf("accelerated: %v", Accelerated)
		var acc [4]uint64
		for b.Loop() {
			Add(&acc, blocks)
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(msgs)), "ns/message")
	})
	b.Run("crypto-sha256", func(b *testing.B) {
		var acc [4]uint64
		for b.Loop() {
			for _, m := range msgs {
				d := sha256.Sum256(m)
				var carry uint64
				for i := range 4 {
					acc[i], carry = bits.Add64(acc[i], binary.BigEndian.Uint64(d[24-8*i:]), carry)
				}
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(msgs)), "ns/message")
	})
}
