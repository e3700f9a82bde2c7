package queue

// ShrinkAfter exposes shrinkAfter to the external tests.
const ShrinkAfter = shrinkAfter
