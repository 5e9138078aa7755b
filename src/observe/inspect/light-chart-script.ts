/**
 * The pages' chart lighting, as client script: `lightChart(holder, paths, previous, cause,
 * keepInView)` marks the active states of an inline chart SVG (`g.state[data-state]`), the arrow
 * just taken from `previous` to `paths` (`g.transition[data-source][data-target]`), or the note of
 * the user event that caused the change (`g.note[data-events]`). Shared by the live viewer's page
 * and the host viewer's page.
 */
export const lightChartScript = `
function lightChart(holder, paths, previous, cause, keepInView) {
  let innermost = null;
  for (const node of holder.querySelectorAll('g.state')) {
    const active = paths.includes(node.dataset.state);
    node.classList.toggle('active', active);
    if (active) innermost = node;
  }
  // The arrow just taken: from a state the run left to one it entered. A change caused by an event
  // the chart says once in a note (cancel) points at the note instead.
  const note = cause ? [...holder.querySelectorAll('g.note[data-events]')].find((node) => node.dataset.events.split(' ').includes(cause)) : undefined;
  for (const node of holder.querySelectorAll('g.note')) node.classList.toggle('taken', node === note);
  const arrows = [...holder.querySelectorAll('g.transition')];
  const left = (arrow) => previous.includes(arrow.dataset.source);
  const entered = (state) => paths.includes(state) && !previous.includes(state);
  let taken = note ? [] : arrows.filter((arrow) => left(arrow) && entered(arrow.dataset.target));
  // None: the run passed through a state it never stops in (preparing): both arrows are lit.
  if (!note && taken.length === 0) {
    taken = arrows.flatMap((first) =>
      left(first) ? arrows.filter((second) => second.dataset.source === first.dataset.target && entered(second.dataset.target)).flatMap((second) => [first, second]) : [],
    );
  }
  for (const arrow of arrows) arrow.classList.toggle('taken', taken.includes(arrow));
  // A chart drawn at its own size: keep the current state in view.
  if (keepInView && innermost) {
    const box = innermost.getBoundingClientRect();
    const frame = holder.getBoundingClientRect();
    holder.scrollBy({ left: box.left + box.width / 2 - (frame.left + frame.width / 2), top: box.top + box.height / 2 - (frame.top + frame.height / 2) });
  }
}
`;
