package consul

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fraktor-go/fraktor/extension"
	"github.com/fraktor-go/fraktor/internal/testconsul"
)

// holdChecks is an HTTP transport whose service-check updates block,
// whatever their context says, until release is closed: an agent request
// on its way out that has not seen its cancellation.
type holdChecks struct {
	*cuttable
	held    chan struct{} // one token per held update (dropped when full)
	release chan struct{}
}

func (h *holdChecks) RoundTrip(r *http.Request) (*http.Response, error) {
	if strings.HasPrefix(r.URL.Path, "/v1/agent/check/update/") {
		select {
		case h.held <- struct{}{}:
		default:
		}
		<-h.release
		return nil, errors.New("test: check update held")
	}
	return h.cuttable.RoundTrip(r)
}

// A Stop or Leave cut short by its ctx returns while the membership's
// goroutines are still on their way out; Terminated (extension.Lingerer,
// which the cluster's Terminated waits for) closes only once they, and
// the view watcher this membership stopped, have returned. Before, nothing
// told when they had, so the actor system's Terminated closed while they
// still ran.
func TestConsulMembershipTerminatedAfterCutShortStop(t *testing.T) {
	for _, leave := range []bool{false, true} {
		name := "stop"
		if leave {
			name = "leave"
		}
		t.Run(name, func(t *testing.T) {
			agent := testconsul.Start(t)
			cfg := testConfig(t, agent)
			tr := &holdChecks{cuttable: newCuttable(), held: make(chan struct{}, 16), release: make(chan struct{})}
			released := false
			defer func() {
				if !released {
					close(tr.release)
				}
			}()
			cfg.API.HttpClient = &http.Client{Transport: tr}
			t.Cleanup(tr.base.CloseIdleConnections)
			m := joinMember(t, newProvider(t, cfg), testMember("a", 1))
			select {
			case <-tr.held:
			case <-time.After(waitLimit):
				t.Fatal("no check update was sent")
			}
			l, ok := m.(extension.Lingerer)
			require.True(t, ok, "a Consul membership tells when its goroutines have returned")
			require.NotNil(t, l.Terminated())

			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			var err error
			if leave {
				err = m.Leave(ctx)
			} else {
				err = m.Stop(ctx)
			}
			require.ErrorIs(t, err, context.Canceled)
			select {
			case <-l.Terminated():
				t.Fatal("Terminated closed while the service-check goroutine was still held")
			default:
			}
			close(tr.release)
			released = true
			select {
			case <-l.Terminated():
			case <-time.After(waitLimit):
				t.Fatal("Terminated never closed")
			}
		})
	}
}
