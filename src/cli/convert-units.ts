/** Linear units by dimension, as the factor to the dimension's base unit (m, kg, l, s). */
const linear: Record<string, Record<string, number>> = {
  length: { m: 1, km: 1000, cm: 0.01, mm: 0.001, mi: 1609.344, yd: 0.9144, ft: 0.3048, in: 0.0254, nmi: 1852 },
  mass: { kg: 1, g: 0.001, mg: 0.000001, t: 1000, lb: 0.45359237, oz: 0.028349523125, st: 6.35029318 },
  volume: { l: 1, ml: 0.001, m3: 1000, gal: 3.785411784, qt: 0.946352946, pt: 0.473176473, cup: 0.2365882365, floz: 0.0295735295625 },
  time: { s: 1, ms: 0.001, min: 60, h: 3600, d: 86400, wk: 604800 },
};

const aliases: Record<string, string> = {
  meter: 'm',
  meters: 'm',
  metre: 'm',
  metres: 'm',
  kilometer: 'km',
  kilometers: 'km',
  kilometre: 'km',
  kilometres: 'km',
  centimeter: 'cm',
  centimeters: 'cm',
  millimeter: 'mm',
  millimeters: 'mm',
  mile: 'mi',
  miles: 'mi',
  yard: 'yd',
  yards: 'yd',
  foot: 'ft',
  feet: 'ft',
  inch: 'in',
  inches: 'in',
  kilogram: 'kg',
  kilograms: 'kg',
  kilo: 'kg',
  kilos: 'kg',
  gram: 'g',
  grams: 'g',
  pound: 'lb',
  pounds: 'lb',
  lbs: 'lb',
  ounce: 'oz',
  ounces: 'oz',
  liter: 'l',
  liters: 'l',
  litre: 'l',
  litres: 'l',
  milliliter: 'ml',
  milliliters: 'ml',
  gallon: 'gal',
  gallons: 'gal',
  quart: 'qt',
  quarts: 'qt',
  pint: 'pt',
  pints: 'pt',
  cups: 'cup',
  second: 's',
  seconds: 's',
  sec: 's',
  minute: 'min',
  minutes: 'min',
  hour: 'h',
  hours: 'h',
  day: 'd',
  days: 'd',
  week: 'wk',
  weeks: 'wk',
  celsius: 'c',
  '°c': 'c',
  fahrenheit: 'f',
  '°f': 'f',
  kelvin: 'k',
};

const temperatures = new Set(['c', 'f', 'k']);

const normalise = (unit: string) => {
  const lower = unit.trim().toLowerCase();
  return aliases[lower] ?? lower;
};

function toCelsius(value: number, unit: string): number {
  if (unit === 'f') return ((value - 32) * 5) / 9;
  if (unit === 'k') return value - 273.15;
  return value;
}

function fromCelsius(value: number, unit: string): number {
  if (unit === 'f') return (value * 9) / 5 + 32;
  if (unit === 'k') return value + 273.15;
  return value;
}

/** Every unit `convertUnits` knows, for error messages and the tool's description. */
export const knownUnits = [...Object.values(linear).flatMap((units) => Object.keys(units)), ...temperatures];

/**
 * Converts between units of one dimension (length, mass, volume, time, temperature). Throws an
 * error naming the unit it does not know, or the two dimensions that do not mix.
 *
 * @example
 * ```ts
 * convertUnits(10, 'km', 'miles'); // 6.2137…
 * convertUnits(100, '°F', 'C'); // 37.77…
 * ```
 */
export function convertUnits(value: number, from: string, to: string): number {
  const source = normalise(from);
  const target = normalise(to);
  if (temperatures.has(source) || temperatures.has(target)) {
    if (!(temperatures.has(source) && temperatures.has(target)))
      throw new Error(`cannot convert ${from} to ${to}: only temperatures convert to temperatures`);
    return fromCelsius(toCelsius(value, source), target);
  }
  const dimensionOf = (unit: string, given: string) => {
    const found = Object.entries(linear).find(([, units]) => unit in units);
    if (!found) throw new Error(`unknown unit "${given}" (known: ${knownUnits.join(', ')})`);
    return found;
  };
  const [sourceDimension, sourceUnits] = dimensionOf(source, from);
  const [targetDimension, targetUnits] = dimensionOf(target, to);
  if (sourceDimension !== targetDimension) throw new Error(`cannot convert ${from} (${sourceDimension}) to ${to} (${targetDimension})`);
  return (value * (sourceUnits[source] as number)) / (targetUnits[target] as number);
}
