package verify

import "encoding/binary"

// ContentHash is the partition hash of rows rows whose digests sum, as
// big-endian 256-bit numbers modulo 2^256, to sum.
func ContentHash(rows int64, sum [32]byte) string {
	var acc [4]uint64
	for i := range 4 {
		acc[i] = binary.BigEndian.Uint64(sum[24-8*i:])
	}
	return contentHash(V1, rows, acc)
}
