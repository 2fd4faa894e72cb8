package commands

// SetLoadPage shrinks stream-load pages so tests can cross page boundaries cheaply.
func SetLoadPage(n int) (restore func()) {
	old := loadPage
	loadPage = n
	return func() { loadPage = old }
}

// SetWorkSnapshotEvery takes work snapshots every n events, so tests cross several cheaply.
func SetWorkSnapshotEvery(n uint64) (restore func()) {
	old := workSnapshotEvery
	workSnapshotEvery = n
	return func() { workSnapshotEvery = old }
}
