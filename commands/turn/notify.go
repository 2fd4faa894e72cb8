package turn

import (
	"sync"

	"github.com/zuno-run/zuno/events"
)

// notifier hands what a turn records and streams to its observer on a goroutine of its own,
// in order, after the commit: an observer that is slow (a terminal waiting for a person to
// answer an ask, a client on a slow link) never stalls the turn (docs/turns.md, "Observers").
// close delivers what is queued before the turn returns, so a caller has seen everything its
// turn did when Run returns.
type notifier struct {
	obs  Observer
	mu   sync.Mutex
	q    []notice
	wake chan struct{}
	shut bool
	done chan struct{}
}

// notice is one call to make on the observer: a recorded event, or a piece of text.
type notice struct {
	rec  events.Recorded
	p    events.Payload
	text string
}

func newNotifier(obs Observer) *notifier {
	n := &notifier{obs: obs, wake: make(chan struct{}, 1), done: make(chan struct{})}
	go n.loop()
	return n
}

func (n *notifier) Recorded(rec events.Recorded, p events.Payload) { n.put(notice{rec: rec, p: p}) }
func (n *notifier) TextDelta(text string)                          { n.put(notice{text: text}) }

func (n *notifier) put(x notice) {
	n.mu.Lock()
	n.q = append(n.q, x)
	n.mu.Unlock()
	select {
	case n.wake <- struct{}{}:
	default:
	}
}

func (n *notifier) loop() {
	defer close(n.done)
	for {
		n.mu.Lock()
		q, shut := n.q, n.shut
		n.q = nil
		n.mu.Unlock()
		for _, x := range q {
			if x.p != nil {
				n.obs.Recorded(x.rec, x.p)
			} else {
				n.obs.TextDelta(x.text)
			}
		}
		if len(q) == 0 && shut {
			return
		}
		if len(q) == 0 {
			<-n.wake
		}
	}
}

// close waits until everything queued has been delivered.
func (n *notifier) close() {
	n.mu.Lock()
	n.shut = true
	n.mu.Unlock()
	select {
	case n.wake <- struct{}{}:
	default:
	}
	<-n.done
}
