package quantize

// What the package's external tests (package quantize_test, which import
// tts/moss, itself importing this package) read of its internals.
var (
	MapInitializers = mapInitializers
	ExternalRef     = externalRef
	WithRef         = withRef
)

const (
	GraphInit  = graphInit
	ModelGraph = modelGraph
)
