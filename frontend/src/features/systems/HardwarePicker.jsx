// The hardware of a node, chosen by typing part of its name (an ARIA combobox): the list below
// the field narrows as one types, the arrow keys move through it, Enter or a click picks, Escape
// gives the field back its value. The keyboard focus stays in the field throughout.
import { useId, useState } from "react";
import { matchComponents, optionText } from "./picker.js";

const SHOWN = 50;

export function HardwarePicker({ components, value, onChange, readOnly, invalid }) {
  const listId = useId();
  const current = components.find((c) => c.id === value);
  const [query, setQuery] = useState(null); // null: not typing; the field shows the value
  const [active, setActive] = useState(0);
  const open = query !== null && !readOnly;
  const found = open ? matchComponents(components, query).slice(0, SHOWN) : [];
  const pick = (component) => {
    onChange(component.id);
    setQuery(null);
  };
  const onKeyDown = (event) => {
    if (event.key === "ArrowDown" || event.key === "ArrowUp") {
      event.preventDefault();
      if (!open) {
        setQuery("");
        setActive(0);
        return;
      }
      const step = event.key === "ArrowDown" ? 1 : -1;
      setActive((i) => Math.min(Math.max(i + step, 0), Math.max(found.length - 1, 0)));
    } else if (event.key === "Enter" && open) {
      event.preventDefault();
      if (found[active]) pick(found[active]);
    } else if (event.key === "Escape" && open) {
      event.preventDefault();
      event.stopPropagation();
      setQuery(null);
    }
  };
  return (
    <div className="picker">
      <input
        role="combobox"
        aria-label="Node hardware"
        aria-expanded={open}
        aria-controls={listId}
        aria-autocomplete="list"
        aria-activedescendant={open && found[active] ? `${listId}-${found[active].id}` : undefined}
        aria-invalid={invalid || undefined}
        placeholder="type a hardware name"
        readOnly={readOnly}
        value={open ? query : current ? optionText(current) : ""}
        onChange={(e) => {
          setQuery(e.target.value);
          setActive(0);
        }}
        onFocus={(e) => e.target.select()}
        onKeyDown={onKeyDown}
        onBlur={() => setQuery(null)}
      />
      {open && (
        <ul className="picker-list" role="listbox" id={listId} aria-label="Hardware found">
          {found.length === 0 && <li className="muted">No hardware named “{query}”.</li>}
          {found.map((c, i) => (
            <li
              key={c.id}
              id={`${listId}-${c.id}`}
              role="option"
              aria-selected={i === active}
              className={i === active ? "active" : undefined}
              // Picking with the mouse keeps the focus in the field.
              onMouseDown={(e) => {
                e.preventDefault();
                pick(c);
              }}
            >
              {c.name} <span className="muted">{c.type}</span>
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}
