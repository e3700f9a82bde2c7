//go:build race

package clusterbench

// raceEnabled: the race detector is on.
const raceEnabled = true
