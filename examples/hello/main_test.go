package main

import (
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fraktor-go/fraktor/internal/exampletest"
)

func TestMain(m *testing.M) { exampletest.Main(m, main) }

// The program of docs/getting-started.md does what the guide says: each
// greeter is greeted from both members, and both greetings reach one
// activation (one address, counts 1 and 2), and the two members host the
// four activations between them.
func TestHelloOneActivationPerIdentity(t *testing.T) {
	out, err := exampletest.Run(time.Minute)
	require.NoError(t, err)
	t.Log(out)
	greeting := regexp.MustCompile(`(?m)^hello \S+, I am (\w+) on (\S+) \(greeting #(\d)\)$`)
	hosts := map[string]string{}
	counts := map[string][]string{}
	for _, m := range greeting.FindAllStringSubmatch(out, -1) {
		id, host, n := m[1], m[2], m[3]
		if h, ok := hosts[id]; ok {
			require.Equal(t, h, host, "%s answered from two members", id)
		}
		hosts[id] = host
		counts[id] = append(counts[id], n)
	}
	for _, id := range []string{"alice", "bob", "carol", "dave"} {
		require.Equal(t, []string{"1", "2"}, counts[id], "%s's greetings", id)
	}
	total := regexp.MustCompile(`(?m)^activations: (\d+) on A, (\d+) on B$`).FindStringSubmatch(out)
	require.NotNil(t, total, "the activation count line")
	a, _ := strconv.Atoi(total[1])
	b, _ := strconv.Atoi(total[2])
	require.Equal(t, 4, a+b)
}
