// Command devenv starts and stops the real servers lakeswap is tried against
// by hand: `make dev-up` starts MinIO and PostgreSQL on free loopback ports
// and prints the environment to export; `make dev-down` stops them. `devenv
// minio` only makes sure the MinIO server binary is built.
package main
