package commands

// SetLoadPage shrinks stream-load pages so tests can cross page boundaries cheaply.
func SetLoadPage(n int) (restore func()) {
	old := loadPage
	loadPage = n
	return func() { loadPage = old }
}
