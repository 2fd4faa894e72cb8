package queries

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/zuno-run/zuno/domain/model"
)

// ModelRow is one model a provider serves, named as zuno run --model takes it.
type ModelRow struct {
	Provider string `json:"provider"`
	ID       string `json:"id"`
	model.ModelInfo
}

// Models lists the models the providers behind specs serve ("openai", "anthropic",
// "scripted:<file>"), opened with open.
func Models(ctx context.Context, specs []string, open func(spec string) (model.Provider, error)) ([]ModelRow, error) {
	var rows []ModelRow
	for _, spec := range specs {
		p, err := open(spec)
		if err != nil {
			return nil, err
		}
		ms, err := p.Models(ctx)
		var me *model.Error
		if errors.As(err, &me) && me.Provider != "" {
			return nil, err // it names its provider already: said twice it reads "openai: transport: openai: …"
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", spec, err)
		}
		name, _, _ := strings.Cut(spec, ":")
		for _, m := range ms {
			id := name + "/" + m.ID
			if name == "scripted" {
				id = spec
			}
			rows = append(rows, ModelRow{Provider: name, ID: id, ModelInfo: m})
		}
	}
	return rows, nil
}

// Known says a capability as a person reads it: "unknown" when the provider does not say.
func Known[T ~string | ~int64](v T) string {
	var zero T
	if v == zero {
		return "unknown"
	}
	return fmt.Sprint(v)
}
