/**
 * Runs `work` and counts the turns of the event loop (check phases, as `setImmediate` sees them)
 * that came while it ran, calling `onTurn` at each. Work that holds the thread from start to end
 * sees none; work that gives way now and then sees one each time.
 */
export async function turnsDuring<T>(
  work: () => Promise<T>,
  onTurn: () => void = () => {},
): Promise<{ result: T; turns: number }> {
  let turns = 0;
  let running = true;
  const turn = () => {
    turns++;
    onTurn();
    if (running) setImmediate(turn);
  };
  setImmediate(turn);
  try {
    return { result: await work(), turns };
  } finally {
    running = false;
  }
}
