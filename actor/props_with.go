package actor

import "slices"

// With returns new Props made of p's settings with opts applied after them;
// p itself is unchanged. Extensions use it to add middleware to Props that
// users hand them (the cluster adds its grain middleware to a kind's Props).
func (p *Props) With(opts ...PropsOption) *Props {
	q := &Props{producer: p.producer, fn: p.fn}
	if o := p.opt; o != nil {
		q.opt = &propsOptions{
			supervisor: o.supervisor,
			receiveMW:  slices.Clone(o.receiveMW),
			sendMW:     slices.Clone(o.sendMW),
			spawnMW:    slices.Clone(o.spawnMW),
			invokeMW:   slices.Clone(o.invokeMW),
			newQueue:   o.newQueue,
			dispatcher: o.dispatcher,
			blocking:   o.blocking,
			kind:       o.kind,
		}
	}
	for _, o := range opts {
		if o != nil {
			o.applyProps(q)
		}
	}
	return q
}
