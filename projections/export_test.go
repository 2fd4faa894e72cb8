package projections

// WithBatchSize sets how many events one transaction applies (default 1000): the crash test
// makes batches small so that a kill lands inside one.
func WithBatchSize(n int) Option { return func(r *Runner) { r.batch = n } }
