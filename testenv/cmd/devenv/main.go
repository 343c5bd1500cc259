// Command devenv starts and stops the real servers lakeswap is tried against
// by hand: `make dev-up` starts MinIO and PostgreSQL on free loopback ports
// and prints the environment to export; `make dev-down` stops them. `devenv
// minio` only makes sure the MinIO server binary is built.
package main

import (
	"context"
	"fmt"
	"os"
)

func main() {
	if err := run(context.Background(), os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "devenv:", err)
		os.Exit(1)
	}
}
