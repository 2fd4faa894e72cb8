package httpapi

import (
	_ "embed"
	"net/http"

	"github.com/zuno-run/zuno/commands/queries"
	"github.com/zuno-run/zuno/domain"
)

// openapiJSON is the API's OpenAPI 3.1 document; TestOpenAPIMatchesRoutes holds it to the
// route table both ways.
//
//go:embed openapi.json
var openapiJSON []byte

// metrics serves the process's collectors, behind the same authentication as the API.
func (s *Server) metrics(w http.ResponseWriter, r *http.Request, _ string) error {
	if s.cfg.Metrics == nil {
		return domain.NewError(queries.CodeNotFound, "this server exposes no metrics", "start it with zuno serve, which serves them")
	}
	s.cfg.Metrics.ServeHTTP(w, r)
	return nil
}

func (s *Server) openAPI(w http.ResponseWriter, _ *http.Request, _ string) error {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	_, err := w.Write(openapiJSON)
	return err
}
