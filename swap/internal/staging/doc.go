// Package staging is how an attempt writes files a commit will add: the
// folder each partition of an attempt stages into (Prefix, under a fresh
// attempt's name), the description a commit needs of each file
// (Describe), the file IO staged files go through (IO), and an attempt
// that writes rows back as new files, held while it runs (Restager), for
// a scoped rollback.
package staging
