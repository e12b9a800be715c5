package diff

// defaultEngine is the engine an empty Options.Engine selects: the port.
// The catalogue stays selectable until it is deleted.
const defaultEngine = EnginePort
