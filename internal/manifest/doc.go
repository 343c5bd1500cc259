// Package manifest walks the manifests of an Iceberg snapshot: the one
// loop that reads a manifest list, then each manifest's entries, which
// every reader of a snapshot's files in lakeswap goes through.
package manifest
