package source

import "context"

// alongside runs read, which hands batches to its callback, beside
// consume, which takes them in order: a file is read and cast while the
// batches before are split and spilled, two cores busy where one would
// wait on the other. consume owns nothing: each batch is released after
// it returns. read's batches are released by read after its callback
// returns, as every reader does, so each is retained for the crossing.
func alongside(ctx context.Context, read func(context.Context, func(Batch) error) error, consume func(Batch) error) error {
	out := make(chan Batch, 2)
	rctx, cancel := context.WithCancel(ctx)
	defer cancel()
	readErr := make(chan error, 1)
	go func() {
		defer close(out)
		readErr <- read(rctx, func(b Batch) error {
			b.Rec.Retain()
			select {
			case out <- b:
				return nil
			case <-rctx.Done():
				b.Rec.Release()
				return rctx.Err()
			}
		})
	}()
	var err error
	for b := range out {
		if err == nil {
			if err = consume(b); err != nil {
				cancel()
			}
		}
		b.Rec.Release()
	}
	if rerr := <-readErr; err == nil {
		err = rerr
	}
	return err
}
