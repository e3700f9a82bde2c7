package actor

import "slices"

// With returns new Props made of p's settings with opts applied after them;
// p itself is unchanged. Extensions use it to add middleware to Props that
// users hand them (the cluster adds its grain middleware to a kind's Props).
func (p *Props) With(opts ...PropsOption) *Props {
	q := &Props{
		producer:   p.producer,
		fn:         p.fn,
		supervisor: p.supervisor,
		receiveMW:  slices.Clone(p.receiveMW),
		sendMW:     slices.Clone(p.sendMW),
		spawnMW:    slices.Clone(p.spawnMW),
		invokeMW:   slices.Clone(p.invokeMW),
		newQueue:   p.newQueue,
		dispatcher: p.dispatcher,
		blocking:   p.blocking,
		kind:       p.kind,
	}
	for _, o := range opts {
		if o != nil {
			o.applyProps(q)
		}
	}
	return q
}
