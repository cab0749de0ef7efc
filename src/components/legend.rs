//! The diagram's legend: what each mark and colour means. A toggle in the header; always shown
//! in the sandbox and the primers, where a reader meets the diagram for the first time.

use crate::palette::{thread_colour, OKABE_ITO};
use yew::prelude::*;

fn swatch(style: String) -> Html {
    html! { <span class="swatch" aria-hidden="true" style={style}></span> }
}

#[component]
pub fn Legend() -> Html {
    let colour = OKABE_ITO[1];
    let kernel = [
        ("ksoftirqd/N", thread_colour("ksoftirqd", 0)),
        ("kblockd", thread_colour("kblockd", 0)),
        ("raid5d", thread_colour("raid5d", 0)),
        ("kdmwork", thread_colour("kdmwork", 0)),
    ];
    html! {
        <section class="legend" aria-label="Legend" data-testid="legend">
            <h2>{ "Legend" }</h2>
            <dl>
                <dt>{ swatch(format!("background:{colour};border-radius:50%")) }</dt>
                <dd>{ "a process (fio job or dd); its colour marks its bios and requests everywhere (with several job sections, each job's colour, as in the numbers' job rows)" }</dd>
                <dt><span class="zz">{ "zz" }</span></dt>
                <dd>{ "asleep: in get_request_wait on a full pool (on the pool bar); by a process, which is faded too: in D as top shows it (waiting for its I/O or a request), or on md's stripe cache" }</dd>
                <dt>{ swatch(format!("background:{colour};width:6px;height:6px")) }</dt>
                <dd>{ "a bio on its way down (Q, and X when split)" }</dd>
                <dt>{ swatch(format!("background:{colour};width:22px;height:6px")) }</dt>
                <dd>{ "a request: the longer the bar, the more bytes (log scale); it waits in the elevator lane, then sits on the tag map while the device has it" }</dd>
                <dt>{ swatch("background:var(--dim);width:12px;height:6px".into()) }</dt>
                <dd>{ "a request that was waiting before the animation started (after a skip, a link's jump or a restart): the count is right, its owner is not shown" }</dd>
                <dt>{ swatch("background:var(--fg);width:22px;height:10px".into()) }</dt>
                <dd>{ "pool, tag map and host bars: the dark part is in use (used/limit below); a red edge means full" }</dd>
                <dt><span class="arc" aria-hidden="true">{ "⌒" }</span></dt>
                <dd>{ "on a pool: a sleeper woken by a freed request (the arc runs up to its process); on a disk: the head's position as the platter turns" }</dd>
                <dt>{ swatch("background:var(--line);width:22px;height:10px".into()) }</dt>
                <dd>{ "a CPU strip: coloured by the thread running there now, grey when idle" }</dd>
                { for kernel.iter().map(|(name, c)| html! {
                    <>
                        <dt>{ swatch(format!("background:{c}")) }</dt>
                        <dd>{ format!("{name}: a kernel thread (fixed colour)") }</dd>
                    </>
                }) }
            </dl>
        </section>
    }
}
