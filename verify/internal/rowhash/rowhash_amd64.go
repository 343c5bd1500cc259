//go:build amd64 && !purego

package rowhash

import "golang.org/x/sys/cpu"

// Accelerated says whether this machine hashes blocks with the SHA
// extensions; without them a caller does better hashing its messages with
// crypto/sha256 directly than padding them first.
var Accelerated = cpu.X86.HasAVX && cpu.X86.HasSSE41 && cpu.X86.HasSSSE3 && hasSHA()

// hasSHA reads the SHA extensions bit (leaf 7, EBX bit 29), which
// golang.org/x/sys/cpu does not report.
func hasSHA() bool {
	if maxLeaf, _, _, _ := cpuid(0, 0); maxLeaf < 7 {
		return false
	}
	_, ebx, _, _ := cpuid(7, 0)
	return ebx&(1<<29) != 0
}

func cpuid(leaf, sub uint32) (eax, ebx, ecx, edx uint32)

//go:noescape
func digestsSHANI(out *uint32, blocks []byte)

// digestsSHANI2 hashes blocks two at a time, interleaved: SHA256RNDS2
// waits on its previous result, and a second block fills that wait.
//
//go:noescape
func digestsSHANI2(out *uint32, blocks []byte)

func digests(out []uint32, blocks []byte) {
	if !Accelerated {
		digestsGeneric(out, blocks)
		return
	}
	if len(out) < len(blocks)/BlockSize*8 {
		panic("rowhash: digest buffer too short")
	}
	pairs := len(blocks) / (2 * BlockSize) * (2 * BlockSize)
	if pairs > 0 {
		digestsSHANI2(&out[0], blocks[:pairs])
	}
	if pairs < len(blocks) {
		digestsSHANI(&out[pairs/BlockSize*8], blocks[pairs:])
	}
}
