package retail

import "embed"

// Files are the jobs, their SQL and their tables' schemas.
//
//go:embed *.yaml *.sql
var Files embed.FS
