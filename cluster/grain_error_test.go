package cluster

import (
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fraktor-go/fraktor/actor"
	"github.com/fraktor-go/fraktor/cluster/internal/clusterpb"
)

// A grain method's error becomes the wire message: a *GrainError (wrapped
// too) keeps its code and message, any other error is CodeUnknown with its
// text; the caller's side turns it back into a *GrainError that errors.Is
// matches by code.
func TestGrainErrorWire(t *testing.T) {
	ge := NewGrainError("insufficient_funds", "balance %d", 3)
	require.Equal(t, "balance 3", ge.Message)
	require.Equal(t, "cluster: grain error insufficient_funds: balance 3", ge.Error())
	require.Equal(t, "100% sure", NewGrainError("x", "100% sure").Message)

	for _, tc := range []struct {
		err        error
		code, text string
	}{
		{ge, "insufficient_funds", "balance 3"},
		{fmt.Errorf("withdraw: %w", ge), "insufficient_funds", "balance 3"},
		{errors.New("disk full"), CodeUnknown, "disk full"},
	} {
		w := grainErrorOf(tc.err)
		require.Equal(t, tc.code, w.Code)
		require.Equal(t, tc.text, w.Message)
		_, err := GrainReply[*clusterpb.ViewAck](w)
		var back *GrainError
		require.ErrorAs(t, err, &back)
		require.Equal(t, tc.code, back.Code)
		require.ErrorIs(t, err, &GrainError{Code: tc.code})
		require.NotErrorIs(t, err, &GrainError{Code: "other"})
	}

	var tm *actor.TypeMismatchError
	_, err := GrainReply[*clusterpb.ViewAck](&clusterpb.BlockNotice{})
	require.ErrorAs(t, err, &tm)
	v, err := GrainReply[*clusterpb.ViewAck](&clusterpb.ViewAck{Epoch: 2})
	require.NoError(t, err)
	require.Equal(t, uint64(2), v.Epoch)
}

// A typed nil *GrainError held in an error neither panics in Error nor in
// errors.Is (a grain method's "return nil, err" with a nil *GrainError err).
func TestGrainErrorTypedNil(t *testing.T) {
	var ge *GrainError
	var err error = ge
	require.NotPanics(t, func() { _ = err.Error() })
	require.Contains(t, err.Error(), "<nil>")
	require.False(t, errors.Is(err, &GrainError{Code: "x"}))
	require.False(t, errors.Is(&GrainError{Code: "x"}, ge))
}
