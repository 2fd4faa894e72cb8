package httpapi

import (
	_ "embed"
	"net/http"
)

// openapiJSON is the API's OpenAPI 3.1 document; TestOpenAPIMatchesRoutes holds it to the
// route table both ways.
//
//go:embed openapi.json
var openapiJSON []byte

func (s *Server) openAPI(w http.ResponseWriter, _ *http.Request, _ string) error {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	_, err := w.Write(openapiJSON)
	return err
}
