// Package assets holds the model manifest (files, pinned URLs, sizes,
// sha256), verified, resumable downloads into the user's model cache
// (see CacheDir and Puller), and lookup of files that scripts/setup
// installs under third_party/.
package assets
