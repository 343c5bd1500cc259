// Package gc removes what attempts at a run left behind when they never
// committed: staged files, incomplete uploads, holds past their time, and
// run tags past their retention. It judges files by lakeswap's staging
// layout and the holds (package hold), never by prefix alone, and never
// removes a file a snapshot of the table references.
package gc
