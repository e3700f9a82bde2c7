package extension

import "strings"

// installOrder returns the positions of the nodes in install order: each node
// after all of its requirements, and otherwise in config order. At every
// step it takes the earliest-configured node whose requirements are all
// placed, so independent installers keep their relative config order.
//
// requires[i] holds positions into the same slice. When the requirements form
// a cycle, installOrder returns nil and the cycle as positions, first node
// repeated at the end (a → b → a).
func installOrder(requires [][]int) (order, cycle []int) {
	n := len(requires)
	placed := make([]bool, n)
	order = make([]int, 0, n)
	for len(order) < n {
		next := -1
		for i := 0; i < n && next < 0; i++ {
			if !placed[i] && allPlaced(requires[i], placed) {
				next = i
			}
		}
		if next < 0 {
			return nil, findCycle(requires, placed)
		}
		placed[next] = true
		order = append(order, next)
	}
	return order, nil
}

func allPlaced(reqs []int, placed []bool) bool {
	for _, r := range reqs {
		if !placed[r] {
			return false
		}
	}
	return true
}

// findCycle walks from the first unplaced node along unplaced requirements.
// Every unplaced node has at least one unplaced requirement (or it would have
// been placed), so the walk must come back to a node it has seen.
func findCycle(requires [][]int, placed []bool) []int {
	start := -1
	for i := range placed {
		if !placed[i] {
			start = i
			break
		}
	}
	if start < 0 {
		return nil
	}
	seenAt := make(map[int]int)
	var path []int
	for cur := start; ; {
		if at, ok := seenAt[cur]; ok {
			return append(path[at:], cur)
		}
		seenAt[cur] = len(path)
		path = append(path, cur)
		next := -1
		for _, r := range requires[cur] {
			if !placed[r] {
				next = r
				break
			}
		}
		if next < 0 { // unreachable by the invariant above; stay safe
			return path
		}
		cur = next
	}
}

// cycleString renders a cycle of positions as "a -> b -> a".
func cycleString(cycle []int, names []string) string {
	parts := make([]string, len(cycle))
	for i, c := range cycle {
		parts[i] = names[c]
	}
	return strings.Join(parts, " -> ")
}
