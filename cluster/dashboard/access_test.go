package dashboard_test

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/fraktor-go/fraktor/cluster/dashboard"
)

// The dashboard answers reads only, and by default only for a loopback
// name or an IP literal: a page elsewhere that points its own DNS name at
// 127.0.0.1 (DNS rebinding) sends that name as Host and is refused.
func TestDashboardRefusesOtherMethodsAndHosts(t *testing.T) {
	serve := func(d *dashboard.Dashboard, method, host string) *httptest.ResponseRecorder {
		r := httptest.NewRequest(method, "http://x/api/state", nil)
		r.Host = host
		w := httptest.NewRecorder()
		d.ServeHTTP(w, r)
		return w
	}
	d := dashboard.New(dashboard.Config{})
	defer d.Close()
	for _, host := range []string{"127.0.0.1:8080", "127.0.0.1", "[::1]:8080", "[::1]", "localhost:8080",
		"LOCALHOST", "app.localhost:1", "localhost.", "10.1.2.3:80"} {
		assert.Equal(t, http.StatusOK, serve(d, http.MethodGet, host).Code, host)
	}
	assert.Equal(t, http.StatusOK, serve(d, http.MethodHead, "127.0.0.1").Code)
	for _, host := range []string{"evil.example:8080", "evil.example", "", "localhost.evil.example", "127.0.0.1.nip.io"} {
		assert.Equal(t, http.StatusForbidden, serve(d, http.MethodGet, host).Code, host)
	}
	for _, m := range []string{http.MethodPost, http.MethodPut, http.MethodDelete, "BREW"} {
		w := serve(d, m, "127.0.0.1")
		assert.Equal(t, http.StatusMethodNotAllowed, w.Code, m)
		assert.Equal(t, "GET, HEAD", w.Header().Get("Allow"))
	}

	named := dashboard.New(dashboard.Config{AllowedHosts: []string{"Dash.Example."}})
	defer named.Close()
	assert.Equal(t, http.StatusOK, serve(named, http.MethodGet, "dash.example:443").Code)
	assert.Equal(t, http.StatusOK, serve(named, http.MethodGet, "127.0.0.1").Code)
	assert.Equal(t, http.StatusForbidden, serve(named, http.MethodGet, "evil.example").Code)
	any := dashboard.New(dashboard.Config{AllowedHosts: []string{"*"}})
	defer any.Close()
	assert.Equal(t, http.StatusOK, serve(any, http.MethodGet, "whatever.example").Code)
}
