// Package await holds the wait that every part of a shutdown uses: for a
// part's done channel, bounded by the caller's context.
package await
