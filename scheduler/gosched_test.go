package scheduler_test

import "runtime"

func runtimeGosched() { runtime.Gosched() }
