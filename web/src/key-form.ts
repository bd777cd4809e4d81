import { keyWorks, saveKey } from './api';
import { h, replace } from './dom';

/**
 * The form that asks for the API key (the app's and the explorer's): it checks the key against the
 * server before keeping it where both read it, and says why one is refused.
 */
export function keyForm(o: {
  title: string;
  intro: (string | HTMLElement)[];
  /** Shown at once: why the key is asked for again. */
  message?: string;
  className: string;
  minLength?: number;
  /** After the key was checked and kept. */
  saved: (key: string) => void;
}): { form: HTMLFormElement; input: HTMLInputElement } {
  const input = h('input', {
    id: 'api-key',
    type: 'password',
    autocomplete: 'off',
    spellcheck: 'false',
    required: true,
    minlength: o.minLength,
  });
  const status = h('p', { role: 'alert', class: 'error' }, o.message ?? '');
  const form = h(
    'form',
    {
      class: o.className,
      onsubmit: (e: Event) => {
        e.preventDefault();
        const key = input.value.trim();
        // Spaces alone pass the browser's own checks; the server would answer that no key was sent.
        if (!key) return replace(status, 'Enter your API key.');
        replace(status, 'Checking…');
        keyWorks(key).then(
          (ok) => {
            // A refusal comes back as the words to show, not as false.
            if (ok !== true) return replace(status, ok);
            saveKey(key);
            o.saved(key);
          },
          () => replace(status, 'The server did not answer; try again.'),
        );
      },
    },
    h('h1', {}, o.title),
    h('p', {}, ...o.intro),
    h('label', { for: 'api-key' }, 'API key'),
    h('div', { class: 'row' }, input, h('button', { type: 'submit' }, 'Save key')),
    status,
  );
  return { form, input };
}
