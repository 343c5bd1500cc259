// Package rollback undoes a run the table's history records: main pointed
// back at the snapshot the run replaced (a whole run, or every table of a
// release), or, scoped, the run's partitions given back what they held.
// Each rollback is judged by the guards of the one list (a freeze, a
// release's shares) and lands through the one commit engine. It reads
// everything it needs from the table; swap's Publisher gives it the
// guards and the restaging of rows.
package rollback
