// Package assets will hold the model manifest (files, pinned URLs, sizes,
// sha256), verified downloads and the local model cache.
package assets
