package httpapi

// Routes lists the method and pattern of every route the server registers, for
// TestOpenAPIMatchesRoutes.
func (s *Server) Routes() [][2]string {
	out := make([][2]string, len(s.routes))
	for i, r := range s.routes {
		out[i] = [2]string{r.method, r.pattern}
	}
	return out
}
