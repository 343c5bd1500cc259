// Package hold keeps an attempt's files from gc. An attempt holds its
// files while it may still need them: a small file under the table's
// location, <location>/lakeswap/holds/<run id>-<attempt>.json,
// names the attempt, so that gc, which removes the files of attempts that
// never committed, leaves them. A publish holds its attempt while it runs
// (kind run) and refreshes the hold every Refresh, so that gc tells a
// live publish, however long, from a killed one; a staged plan (kind plan)
// is held until it is applied or discarded, or for gc's plan retention.
package hold
