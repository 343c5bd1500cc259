package source

import (
	"context"
	"runtime"
)

// castWorkers is the most jobs castInOrder casts at once.
const castWorkers = 4

// castInOrder casts the jobs produce hands over on every core and hands
// the batches to fn in the jobs' order: rows, their lines and the first
// refusal are those of casting the jobs one after another. cast owns its
// job (it frees what the job holds, even when ctx is done); fn owns
// nothing, each batch being released after it returns.
func castInOrder[J any](ctx context.Context, produce func(context.Context, func(J) bool) error, cast func(context.Context, J) ([]Batch, error), fn func(Batch) error) error {
	type result struct {
		batches []Batch
		err     error
	}
	type job struct {
		j    J
		done chan result
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	// At most castWorkers jobs are cast at once and as many wait, cast, to
	// be handed on: what is in flight does not grow with the cores.
	workers := min(runtime.GOMAXPROCS(0), castWorkers)
	work := make(chan job)
	order := make(chan chan result, workers) // jobs in flight, in order
	run := func(j job) {
		batches, err := cast(ctx, j.j)
		j.done <- result{batches, err}
	}
	for range workers {
		go func() {
			for j := range work {
				run(j)
			}
		}()
	}
	produced := make(chan error, 1)
	go func() {
		defer close(work)
		defer close(order)
		produced <- produce(ctx, func(jj J) bool {
			j := job{jj, make(chan result, 1)}
			select {
			case order <- j.done:
			case <-ctx.Done():
				run(j) // frees what it holds; no one waits for it
				return false
			}
			select {
			case work <- j:
				return true
			case <-ctx.Done():
				run(j)
				return false
			}
		})
	}()
	var err error
	for done := range order {
		res := <-done
		for _, b := range res.batches {
			if err == nil {
				err = fn(b)
			}
			b.Rec.Release()
		}
		if err == nil {
			err = res.err
		}
		if err != nil {
			cancel()
		}
	}
	if perr := <-produced; err == nil {
		err = perr
	}
	return err
}
