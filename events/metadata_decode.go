package events

import "encoding/json"

// DecodeMetadata decodes an event's stored metadata as encoding/json does, with the decoder
// Decode takes for data (fastUnmarshal): a store decodes the metadata of every event it reads,
// and encoding/json took half of the SQLite store's time to read a session
// (docs/storage.md, "`zuno verify`"). What a store writes is scanned without reflection
// (scanMetadata); anything else is decoded by fastUnmarshal. A failure is decoded again by
// encoding/json, whose error and result are the ones returned.
func DecodeMetadata(data []byte, md *Metadata) error {
	before := *md
	if scanMetadata(data, md) {
		return nil
	}
	*md = before
	if err := fastUnmarshal(data, md); err == nil {
		return nil
	}
	*md = before
	return json.Unmarshal(data, md)
}
