package testkit

import "github.com/fraktor-go/fraktor/remote"

// MemberRemoteConfigForTest is the remote config NewCluster gives a
// member under opts (its address, system name and serializers aside).
func MemberRemoteConfigForTest(opts ...ClusterOption) remote.Config {
	var o clusterOptions
	for _, op := range opts {
		op.applyCluster(&o)
	}
	return memberRemoteConfig(o)
}
