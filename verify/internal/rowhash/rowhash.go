package rowhash

import (
	"crypto/sha256"
	"encoding/binary"
	"math/bits"
)

const (
	// BlockSize is the SHA-256 block: one message per block.
	BlockSize = 64
	// MaxShort is the longest message that fits in one block beside its
	// padding (0x80 and the 8-byte length).
	MaxShort = BlockSize - 9
)

// Pad clears block and writes the padding of a message of n bytes, n <=
// MaxShort: 0x80 after it, zeros, and its length in bits. The message is
// written into block[:n] afterwards.
func Pad(block []byte, n int) {
	b := (*[BlockSize]byte)(block)
	*b = [BlockSize]byte{} // a few wide stores, where clearing the tail was a call
	b[n] = 0x80
	binary.BigEndian.PutUint64(b[BlockSize-8:], uint64(n)*8)
}

// chunk is how many digests are computed before they are added up; the
// words of 256 digests (8 KiB) stay in the first-level cache.
const chunk = 256

// Add adds, modulo 2^256, the SHA-256 digest of each padded block's message
// to acc: the digest read as a big-endian number, acc held as little-endian
// 64-bit limbs.
func Add(acc *[4]uint64, blocks []byte) {
	var out [chunk * 8]uint32
	for len(blocks) >= BlockSize {
		n := min(len(blocks)/BlockSize, chunk)
		digests(out[:n*8], blocks[:n*BlockSize])
		for i := range n {
			h := out[8*i : 8*i+8 : 8*i+8]
			var carry uint64
			acc[0], carry = bits.Add64(acc[0], uint64(h[6])<<32|uint64(h[7]), 0)
			acc[1], carry = bits.Add64(acc[1], uint64(h[4])<<32|uint64(h[5]), carry)
			acc[2], carry = bits.Add64(acc[2], uint64(h[2])<<32|uint64(h[3]), carry)
			acc[3], _ = bits.Add64(acc[3], uint64(h[0])<<32|uint64(h[1]), carry)
		}
		blocks = blocks[n*BlockSize:]
	}
}

// digestsGeneric hashes each block's message, found from the length in its
// padding, with crypto/sha256 and stores the digest as eight words.
func digestsGeneric(out []uint32, blocks []byte) {
	for i := 0; len(blocks) >= BlockSize; i++ {
		n := binary.BigEndian.Uint64(blocks[BlockSize-8:]) / 8
		d := sha256.Sum256(blocks[:n])
		for w := range 8 {
			out[8*i+w] = binary.BigEndian.Uint32(d[4*w:])
		}
		blocks = blocks[BlockSize:]
	}
}
