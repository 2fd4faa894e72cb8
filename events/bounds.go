package events

// Bounds are the tool output limits a turn ran under, as in effect: the layers merged, the
// project layer only lowering, each clamped to its ceiling (docs/config.md, "Bounds"). They
// are recorded because a value read from a file is not the value in effect.
type Bounds struct {
	MaxBytes                int   `json:"maxBytes"`
	MaxLines                int   `json:"maxLines"`
	MaxArtifactBytes        int64 `json:"maxArtifactBytes"`
	MaxSessionArtifactBytes int64 `json:"maxSessionArtifactBytes"`
}
