//go:build !amd64 || purego

package rowhash

// Accelerated is false: this build has no block-at-a-time SHA-256.
var Accelerated = false

func digests(out []uint32, blocks []byte) { digestsGeneric(out, blocks) }
