package dashboard_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"time"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"

	"github.com/fraktor-go/fraktor/actor"
	"github.com/fraktor-go/fraktor/cluster"
	"github.com/fraktor-go/fraktor/cluster/dashboard"
	"github.com/fraktor-go/fraktor/remote"
)

// The dashboard mounted in a program's own server (docs/getting-started.md,
// step 4): a member's MeterProvider with the dashboard's View, the member
// attached with its reader, the handler under /cluster/.
func ExampleNew() {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	reg, err := cluster.NewMemoryRegistry(cluster.DefaultMemoryConfig())
	if err != nil {
		fmt.Println(err)
		return
	}
	defer reg.Close()

	reader := sdkmetric.NewManualReader() // request rate and latency come from the cluster's metrics
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader), dashboard.View())
	rcfg := remote.DefaultConfig()
	rcfg.SystemName = "shop"
	sys, err := actor.NewSystem(actor.SystemConfig{Name: "shop", MeterProvider: mp, Extensions: []actor.ExtensionInstaller{
		remote.Install(rcfg),
		cluster.Install(cluster.Config{Name: "shop", Provider: reg, MemberID: "m1"}),
	}})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer func() { _ = sys.Shutdown(ctx) }()

	d := dashboard.New(dashboard.Config{Title: "my cluster"})
	d.Attach(cluster.Get(sys), reader)
	defer d.Close()
	mux := http.NewServeMux()
	mux.Handle("/cluster/", http.StripPrefix("/cluster", d))

	// What a browser on this machine asks for (the dashboard answers
	// localhost and IP literals; see Config.AllowedHosts for DNS names).
	rec := httptest.NewRecorder()
	mux.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "http://localhost:8080/cluster/api/state", nil))
	var st dashboard.State
	if err := json.Unmarshal(rec.Body.Bytes(), &st); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(rec.Code, st.Title)
	for _, m := range st.Members {
		fmt.Println(m.ID, "local:", m.Local)
	}
	// Output:
	// 200 my cluster
	// m1 local: true
}
