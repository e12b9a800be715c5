//go:build !portengine

package diff

// defaultEngine is the engine an empty Options.Engine selects. The
// portengine build tag makes it the port, so that the whole test suite
// can run under it.
const defaultEngine = EngineCatalogue
