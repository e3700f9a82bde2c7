package actor_test

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/fraktor-go/fraktor/actor"
)

// The messages of the IoT device registry of Akka's getting-started guide
// (device groups → devices, a query per request), ported.
type (
	TrackDevice      struct{ DeviceID string }
	DeviceRegistered struct{ Device *actor.PID }
	RecordTemp       struct{ Value float64 }
	TempRecorded     struct{}
	ReadTemp         struct{ RequestID int }
	RespondTemp      struct {
		RequestID int
		Value     *float64 // nil: no reading yet
	}
	AllTemps      struct{ RequestID int }
	RespondAll    struct{ Temps map[string]string }
	queryTimedOut struct{}
)

// device keeps the last reading. State lives in the instance that
// PropsFromProducer makes: a restart starts it over, as in Akka.
func device(id string) *actor.Props {
	return actor.PropsFromProducer(func() actor.Actor {
		var last *float64
		return actor.ReceiveFunc(func(c actor.Context) {
			switch m := c.Message().(type) {
			case *RecordTemp:
				if m.Value < -273.15 {
					panic(fmt.Sprintf("%s: impossible reading %v", id, m.Value))
				}
				v := m.Value
				last = &v
				c.Respond(&TempRecorded{})
			case *ReadTemp:
				switch id {
				case "asleep": // never answers: the query times out
				case "leaving": // stops without answering: the query sees Terminated
					c.Stop(c.Self())
				default:
					c.Respond(&RespondTemp{RequestID: m.RequestID, Value: last})
				}
			}
		})
	})
}

// deviceGroup creates a device per ID on demand (a named child), watches it
// (a parent hears of a child's end only through a watch of its own) and
// answers AllTemps with a query actor per request, as Akka's DeviceGroup.
func deviceGroup() actor.Actor {
	devices := map[string]*actor.PID{}
	ids := map[string]string{} // PID.ID → device ID
	nextQuery := 0
	return actor.ReceiveFunc(func(c actor.Context) {
		switch m := c.Message().(type) {
		case *TrackDevice:
			pid, ok := devices[m.DeviceID]
			if !ok {
				pid, _ = c.SpawnNamed(device(m.DeviceID), m.DeviceID)
				c.Watch(pid)
				devices[m.DeviceID], ids[pid.ID] = pid, m.DeviceID
			}
			c.Respond(&DeviceRegistered{Device: pid})
		case *actor.Terminated:
			id := ids[m.Who.ID]
			delete(devices, id)
			delete(ids, m.Who.ID)
		case *AllTemps:
			nextQuery++
			snapshot := map[string]*actor.PID{}
			for id, pid := range devices {
				snapshot[id] = pid
			}
			// The query answers the original asker: it gets the sender's PID.
			c.Spawn(actor.PropsFromProducer(func() actor.Actor {
				return groupQuery(snapshot, m.RequestID, c.Sender(), 200*time.Millisecond)
			}))
		}
	})
}

// groupQuery asks every device, watches them, and answers once each device
// answered, ended or the timeout fired (a keyed single timer).
func groupQuery(devices map[string]*actor.PID, requestID int, replyTo *actor.PID, timeout time.Duration) actor.Actor {
	waiting := map[string]string{} // PID.ID → device ID
	temps := map[string]string{}
	done := func(c actor.Context) {
		if len(waiting) > 0 {
			return
		}
		c.Send(replyTo, &RespondAll{Temps: temps})
		c.Stop(c.Self())
	}
	return actor.ReceiveFunc(func(c actor.Context) {
		switch m := c.Message().(type) {
		case *actor.Started:
			c.Timers().StartSingle("timeout", timeout, &queryTimedOut{})
			for id, pid := range devices {
				waiting[pid.ID] = id
				c.Watch(pid)
				c.Request(pid, &ReadTemp{RequestID: requestID})
			}
			done(c)
		case *RespondTemp:
			id := waiting[c.Sender().ID]
			delete(waiting, c.Sender().ID)
			c.Unwatch(c.Sender())
			if m.Value == nil {
				temps[id] = "no reading"
			} else {
				temps[id] = fmt.Sprintf("%.1f", *m.Value)
			}
			done(c)
		case *actor.Terminated:
			if id, ok := waiting[m.Who.ID]; ok {
				temps[id] = "not available"
				delete(waiting, m.Who.ID)
			}
			done(c)
		case *queryTimedOut:
			for _, id := range waiting {
				temps[id] = "timed out"
			}
			clear(waiting)
			done(c)
		}
	})
}

// Akka's IoT example ported: a group creates devices on demand and watches
// them; a query actor per request collects every device's answer, a
// device that stops (Terminated) or does not answer in time (a timer),
// and replies to the asker. A device that panics is restarted by its
// group's strategy, keeping its PID and losing its state.
func Example_akkaDeviceRegistry() {
	sys, _ := actor.NewSystem(actor.SystemConfig{})
	defer sys.Shutdown(context.Background())
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()

	group, _ := sys.Root().SpawnNamed(actor.PropsFromProducer(deviceGroup,
		actor.WithSupervisor(actor.OneForOne(3, time.Minute, actor.DefaultDecider))), "group-floor1")
	track := func(id string) *actor.PID {
		r, err := actor.Request[*DeviceRegistered](ctx, sys.Root(), group, &TrackDevice{DeviceID: id})
		if err != nil {
			panic(err)
		}
		return r.Device
	}
	t1, t2 := track("t1"), track("t2")
	track("t3")
	track("asleep")
	track("leaving")
	fmt.Println("same device for the same ID:", track("t1").Equal(t1))

	_, _ = actor.Request[*TempRecorded](ctx, sys.Root(), t1, &RecordTemp{Value: 21.5})
	_, _ = actor.Request[*TempRecorded](ctx, sys.Root(), t2, &RecordTemp{Value: 19})
	// A panic: the group's OneForOne restarts t2 (same PID, state lost);
	// the request that failed gets no answer, so it ends at its deadline.
	short, cancelShort := context.WithTimeout(ctx, 50*time.Millisecond)
	_, err := actor.Request[*TempRecorded](short, sys.Root(), t2, &RecordTemp{Value: -300})
	cancelShort()
	fmt.Println("impossible reading times out:", errors.Is(err, actor.ErrTimeout))

	all, err := actor.Request[*RespondAll](ctx, sys.Root(), group, &AllTemps{RequestID: 1})
	if err != nil {
		panic(err)
	}
	keys := make([]string, 0, len(all.Temps))
	for k := range all.Temps {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Printf("%s: %s\n", k, all.Temps[k])
	}
	// Output:
	// same device for the same ID: true
	// impossible reading times out: true
	// asleep: timed out
	// leaving: not available
	// t1: 21.5
	// t2: no reading
	// t3: no reading
}
