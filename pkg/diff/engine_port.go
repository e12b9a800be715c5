//go:build portengine

package diff

// defaultEngine is the engine an empty Options.Engine selects: the port,
// under the portengine build tag.
const defaultEngine = EnginePort
